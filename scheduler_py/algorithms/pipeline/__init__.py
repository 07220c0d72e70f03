"""Paper 004 (Tantalaki et al., "Pipeline-Based Linear Scheduling of Big Data Streams in the
Cloud", IEEE Access 2020): ``pipeline``; ``docs/algorithms/004-pipeline.md``."""
