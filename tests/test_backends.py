"""Each history backend's own tests, from its module of tests/backends/ (found there, by
`tests.backends.own_tests`: a new backend adds no line here). Their fixtures are every test's
(tests/conftest.py registers those modules as plugins)."""

from __future__ import annotations

from tests.backends import own_tests

globals().update(own_tests())
