"""Adaptive re-scheduling: the trigger, the drain-out reconfiguration and its history."""
