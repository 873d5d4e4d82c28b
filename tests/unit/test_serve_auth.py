"""serve.auth: the token's source, the refused public bind, the constant-time check."""

from __future__ import annotations

import pytest

from verl_rewards.errors import ConfigError
from verl_rewards.serve.auth import check_bind, is_loopback, load_token, token_matches


def test_the_token_file_wins_over_the_environment(tmp_path):
    path = tmp_path / "token"
    path.write_text("from-file\n")
    assert load_token(path, {"VERL_REWARDS_TOKEN": "from-env"}) == "from-file"
    assert load_token(None, {"VERL_REWARDS_TOKEN": " from-env "}) == "from-env"
    assert load_token(None, {}) is None


def test_an_empty_or_missing_token_file_is_a_config_error_naming_it(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("\n")
    with pytest.raises(ConfigError, match="--token-file .*empty is empty"):
        load_token(empty, {})
    with pytest.raises(ConfigError, match="cannot read --token-file .*nope"):
        load_token(tmp_path / "nope", {})


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost", "127.0.0.2"])
def test_loopback_hosts(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "no-such-host.invalid"])
def test_public_or_unknown_hosts_are_not_loopback(host):
    assert not is_loopback(host)


def test_a_public_bind_without_a_token_is_refused_and_says_how_to_fix_it():
    with pytest.raises(ConfigError, match="refusing to serve on 0.0.0.0 without a token.*VERL_REWARDS_TOKEN"):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", "s3cret")
    check_bind("127.0.0.1", None)


@pytest.mark.parametrize(("header", "query", "ok"), [
    ("Bearer s3cret", None, True),
    ("bearer s3cret", None, True),
    (None, "s3cret", True),
    ("Bearer wrong", "s3cret", False),  # a wrong header is not rescued by the query
    ("Bearer wrong", None, False),
    (None, "s3cre", False),
    ("Basic s3cret", None, False),
    (None, None, False),
])
def test_token_matches_bearer_header_or_query(header, query, ok):
    assert token_matches("s3cret", header, query) is ok


@pytest.mark.parametrize("given", ["Bearer tök\udcff", "Bearer \udcc3\udca9", "Bearer \ud800"])
def test_a_token_that_is_not_utf8_is_refused_not_an_error(given):
    # aiohttp hands header bytes that are not UTF-8 over as lone surrogates
    assert token_matches("s3cret", given, None) is False
    assert token_matches("s3cret", None, given.removeprefix("Bearer ")) is False


def test_a_non_ascii_token_matches_itself():
    assert token_matches("tök€n", "Bearer tök€n", None) is True
