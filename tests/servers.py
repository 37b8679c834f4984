"""What the tests and benchmarks that start a server of their own share: asking it, and
stopping it."""

import subprocess
import urllib.error
import urllib.request


def stop(proc, timeout=10):  # a server's process -> ended (terminated, killed if it lingers)
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)


def get(url, headers=None, timeout=30):  # -> (status, headers, body); never raises on an
    # HTTP error status (3xx not followed, 4xx, 5xx)
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()
