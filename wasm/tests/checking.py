"""The packager checks' shared reporting: each check prints ok/FAIL and the script exits 1 if any failed."""

failures = []


def expect(condition, message):
    """Records one check: prints it, and remembers it for the exit status when it failed."""
    print(("ok   " if condition else "FAIL ") + message)
    if not condition:
        failures.append(message)
