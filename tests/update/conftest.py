import pytest

from tests.update.feed_server import FeedServer, Release


@pytest.fixture
def feed_server():
    server = FeedServer()
    yield server
    server.close()


@pytest.fixture
def release(feed_server) -> Release:
    return Release(feed_server)
