"""Talking to a running Storm cluster (Nimbus Thrift API) from the Python side."""
