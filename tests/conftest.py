"Shared pytest configuration: the `slow` marker (tests over 60 s on a 2-core CPU; all run by default)."

def pytest_configure(config):
    config.addinivalue_line('markers', 'slow: takes more than 60 s on a 2-core CPU (deselect with -m "not slow")')
