"""``specdec run --mode block --temperature 0.5 --top-k 2 --top-p 0.8 --draft-rows raw`` (issue 19,
SPEC 9): every sampling option reaches ``config.sampling``; none given, no ``sampling``."""

import argparse

import pytest

from specdec_client.cli import add_config_options, config_settings

OPTIONS = [(["--temperature", "0.5"], {"temperature": 0.5}), (["--top-k", "2"], {"top_k": 2}),
           (["--top-p", "0.8"], {"top_p": 0.8}), (["--min-p", "0"], {"min_p": 0.0}),
           (["--draft-rows", "raw"], {"draft": "raw"})]


def _settings(argv):
    parser = argparse.ArgumentParser()
    add_config_options(parser)
    return config_settings(parser.parse_args(["--draft", "biased", "--seed", "1", *argv]))


@pytest.mark.parametrize("argv, sampling", OPTIONS + [(sum((a for a, _ in OPTIONS), []), {k: v for _, s in OPTIONS for k, v in s.items()})])
def test_each_sampling_option_sets_its_field(argv, sampling):
    assert _settings(argv)["sampling"] == sampling


def test_no_sampling_option_sends_no_sampling():
    assert "sampling" not in _settings(["--mode", "block"])
