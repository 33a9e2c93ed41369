# conftest.py for scripts/numba-suite.sh: numba-cuda's wheel ships its tests (numba.cuda.tests)
# but not the pytest configuration of its repository's testing/ folder, which gives the
# CUDATestCase classes the fixture they request. This supplies it (FileCheck reproducers off).
import pytest


@pytest.fixture(scope="class")
def initialize_from_pytest_config(request):
    if request.cls is not None:
        request.cls._dump_failed_filechecks = False
