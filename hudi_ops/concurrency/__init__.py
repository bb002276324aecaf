"""Coordination between writers: markers, heartbeats, locks, conflict resolution."""
