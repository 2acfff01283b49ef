"""Asks the benchbook kernel for a completion and an inspection before its
engine is open: the notebook's cache lock is held here (as a "benchbook
run" of the same notebook would hold it) while the kernel starts, and let
go a second after the requests are sent. Prints, as JSON, each reply and
when it came, in seconds after the lock was let go (negative: before).

usage: ready.py   (in the kernel's working directory; the notebook is the
                   default "kernel", its cache .benchbook/kernel)
"""
import fcntl
import json
import os
import sys
import time
from queue import Empty

from jupyter_client.manager import KernelManager


def main():
    os.makedirs(".benchbook/kernel", exist_ok=True)
    lock = open(".benchbook/kernel/lock", "a+")
    fcntl.flock(lock, fcntl.LOCK_EX)
    km = KernelManager(kernel_name="benchbook")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    ids = {kc.complete("workload.ht"): "complete", kc.inspect("workload.http"): "inspect"}
    replies = {}

    def collect(until):
        while len(replies) < len(ids) and time.time() < until:
            try:
                reply = kc.get_shell_msg(timeout=max(0.01, until - time.time()))
            except Empty:
                return
            kind = ids.get(reply["parent_header"].get("msg_id"))
            if kind:
                replies[kind] = (reply["content"], time.time())

    held_until = time.time() + 1.0
    collect(held_until)  # what is answered while the lock is held
    time.sleep(max(0, held_until - time.time()))
    released = time.time()
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()
    collect(time.time() + 60)
    out = {kind: dict(content, after_release=at - released) for kind, (content, at) in replies.items()}
    kc.stop_channels()
    km.shutdown_kernel(now=False)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
