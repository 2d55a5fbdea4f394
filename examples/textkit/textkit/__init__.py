"""Small text helpers for a website."""
