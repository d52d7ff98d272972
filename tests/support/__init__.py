"""Test support: a real kubectl, simulator fixtures."""
