"""The judge's tests talk to a real chat-completions server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from verl_rewards_models.testing import ChatServer


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A running server, stopped after the test."""
    with ChatServer() as server:
        yield server
