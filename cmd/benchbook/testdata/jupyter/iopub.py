"""Executes code cells in the benchbook kernel and prints, as JSON on one
line, every message the kernel sent meanwhile: all of iopub (execute_input,
streams, displays, results, errors, statuses), every shell reply, and the
history reply. What a frontend, or anyone subscribed to iopub, sees.

usage: iopub.py CELLS.json   (a JSON list of code strings)

The JSON printed is {"messages": [...], "inputs": the number of
execute_input messages}.
"""
import json
import queue
import sys

from jupyter_client.manager import KernelManager


def main():
    cells = json.load(open(sys.argv[1]))
    km = KernelManager(kernel_name="benchbook")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    messages = []
    inputs = 0

    def drain_iopub(until_idle_of=None):
        nonlocal inputs
        while True:
            try:
                m = kc.get_iopub_msg(timeout=120 if until_idle_of else 1)
            except queue.Empty:
                return
            messages.append({"channel": "iopub", "type": m["msg_type"], "content": m["content"]})
            if m["msg_type"] == "execute_input":
                inputs += 1
            if until_idle_of and m["parent_header"].get("msg_id") == until_idle_of and \
                    m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                return

    for code in cells:
        msg_id = kc.execute(code, store_history=True, stop_on_error=False)
        drain_iopub(msg_id)
        reply = kc.get_shell_msg(timeout=120)
        messages.append({"channel": "shell", "type": reply["msg_type"], "content": reply["content"]})
    msg_id = kc.history(hist_access_type="tail", n=100, output=True, raw=True)
    reply = kc.get_shell_msg(timeout=60)
    messages.append({"channel": "shell", "type": reply["msg_type"], "content": reply["content"]})
    drain_iopub()
    kc.stop_channels()
    km.shutdown_kernel(now=False)
    print(json.dumps({"messages": messages, "inputs": inputs}))


if __name__ == "__main__":
    main()
