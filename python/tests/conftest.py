"""Shared helpers of the Python package's tests: where the repository, its example program and
the Paddle fixtures are, and Paddle (skipped only where a test needs it and it is not installed;
tests/interop/run_all.sh always runs them with Paddle)."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = pathlib.Path(os.environ.get("IRW_FIXTURES", REPO.parent / "shared" / "fixtures"))


@pytest.fixture
def mlp_text() -> str:
    return (REPO / "examples" / "mlp.ir").read_text()


@pytest.fixture
def paddle():
    paddle = pytest.importorskip("paddle")
    paddle.enable_static()
    return paddle
