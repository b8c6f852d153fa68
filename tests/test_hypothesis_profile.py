"""No property test has a deadline (issue 18: a hypothesis ``DeadlineExceeded`` on a loaded machine)."""

from hypothesis import given, settings, strategies as st


def test_the_loaded_profile_has_no_deadline():
    assert settings().deadline is None
    assert settings(max_examples=5).deadline is None  # an explicit @settings inherits it


@settings(max_examples=3)
@given(st.integers())
def test_a_slow_example_is_not_a_failure(value):
    import time

    time.sleep(0.25)  # longer than hypothesis's default 200 ms deadline; asserts nothing about time
