"""Fixtures of the SDK's unit tests (the integration tests use ``live_url``
from ``tests/conftest.py``)."""

import pytest
import responses

from specdec_client import Client

from .service_backend import BASE, register_service


@pytest.fixture
def rsps():
    """A ``responses`` mock that fails on any unregistered request."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


@pytest.fixture
def client():
    """A client of the mocked service (no backoff sleeps)."""
    with Client(BASE, timeout=5, retries=3, backoff_factor=0) as c:
        yield c


@pytest.fixture
def service(rsps):
    """The mock, answering every route with the real Flask app."""
    register_service(rsps)
    return rsps


@pytest.fixture
def at_mock_url(monkeypatch):
    """The ``specdec`` command's service is the mocked one (``SPECDEC_URL``), without colour
    settings from the environment (``NO_COLOR``, ``FORCE_COLOR``)."""
    monkeypatch.setenv("SPECDEC_URL", BASE)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
