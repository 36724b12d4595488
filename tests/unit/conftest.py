"""The unit tests' launches: every fake core that fakebuild makes runs in this
process (support/fakeexec.py), unless a test asks for one as a process
(`fake_core_process`)."""
import pytest

import fakeexec  # noqa: E402  (tests/support)


@pytest.fixture(scope="session", autouse=True)
def _launches_in_process():
    with pytest.MonkeyPatch.context() as mp:
        fakeexec.install(mp)
        yield
