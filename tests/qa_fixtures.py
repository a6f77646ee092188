"""Fixtures shared by the QA loop's test modules (imported by them)."""

import pytest


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Factories hash a password per user; MD5 keeps that from dominating the tests' time."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
