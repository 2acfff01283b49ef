"""Starts several benchbook kernels in one working directory, none told
its notebook (no JPY_SESSION_NAME, as Debian's nbconvert and the classic
Notebook start them), and plays their inputs round by round: in round i,
each kernel is sent its i-th input and answers before the next kernel is
sent its own; a kernel stays up, holding what it opened, until all rounds
are played. Prints, as JSON, per kernel, each input's reply status and
how long it took to come (null: no reply within the timeout).

usage: kernels.py INPUTS.json   ([[code, ...] per kernel])
"""
import json
import os
import sys
import time
from queue import Empty

from jupyter_client.manager import KernelManager

TIMEOUT = 20


def run(kc, code):
    msg_id = kc.execute(code, stop_on_error=False)
    start = time.time()
    while time.time() - start < TIMEOUT:
        try:
            reply = kc.get_shell_msg(timeout=max(0.01, TIMEOUT - (time.time() - start)))
        except Empty:
            break
        if reply["parent_header"].get("msg_id") == msg_id:
            return {"status": reply["content"]["status"], "seconds": time.time() - start,
                    "error": reply["content"].get("evalue", "")}
    return {"status": None, "seconds": None, "error": "no reply in %ds" % TIMEOUT}


def main(path):
    os.environ.pop("JPY_SESSION_NAME", None)
    inputs = json.load(open(path))
    kernels = []
    for _ in inputs:
        km = KernelManager(kernel_name="benchbook")
        km.start_kernel()
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        kernels.append((km, kc))
    results = [[] for _ in inputs]
    for i in range(max(len(codes) for codes in inputs)):
        for k, codes in enumerate(inputs):
            if i < len(codes):
                results[k].append(run(kernels[k][1], codes[i]))
    for km, kc in kernels:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
