"""Rendering findings for people and for machines."""
