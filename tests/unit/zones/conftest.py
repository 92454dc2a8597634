"""Every zoned-connection unit test starts and ends with no cached routers."""
from __future__ import annotations

import pytest

from headrace.zones import forget_routers


@pytest.fixture(autouse=True)
def _fresh_routers():
    forget_routers()
    yield
    forget_routers()
