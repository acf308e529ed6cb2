"""cl100k_base token counting must work with no network at all."""

import subprocess
import sys
import textwrap

from longqa import tokens


def test_counts_match_known_cl100k_ids():
    assert tokens.encoding().encode_ordinary("hello world") == [15339, 1917]
    assert tokens.count("") == 0
    assert tokens.count("The quick brown fox jumps over the lazy dog.") == 10


def test_truncate_keeps_a_prefix_within_the_limit():
    text = "one two three four five six seven eight nine ten"
    cut = tokens.truncate(text, 4)
    assert text.startswith(cut) and tokens.count(cut) == 4
    assert tokens.truncate(text, 100) == text


def test_encoding_loads_with_sockets_blocked(tmp_path):
    # A fresh interpreter where any attempt to open a socket raises: loading must not need one.
    script = textwrap.dedent(
        """
        import socket
        class Blocked(socket.socket):
            def __init__(self, *a, **k):
                raise OSError("network blocked by test")
        socket.socket = Blocked
        socket.create_connection = lambda *a, **k: (_ for _ in ()).throw(OSError("blocked"))
        import os
        os.environ["TIKTOKEN_CACHE_DIR"] = os.environ["EMPTY_CACHE"]
        from longqa import tokens
        print(tokens.count("offline tokens work"))
        """
    )
    env = {"EMPTY_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) == tokens.count("offline tokens work")
