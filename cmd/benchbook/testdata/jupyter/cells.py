"""Plays a JupyterLab session against the benchbook kernel: each step sends
code with the cell id (and deleted cells) JupyterLab puts in an
execute_request's metadata, and the step's outcome is printed as JSON:
reply status, error, result text, stdout, and the benchbook status line's
metadata.

usage: cells.py STEPS.jsonl   (one JSON object per line:
                              {"code": ..., "cell": id or null,
                               "deleted": [...]} or {"restart": true})
"""
import json
import sys

from jupyter_client.manager import KernelManager


def execute(kc, code, cell=None, deleted=()):
    meta = {}
    if cell:
        meta["cellId"] = cell
    if deleted:
        meta["deletedCells"] = list(deleted)
    msg = kc.session.msg("execute_request", {
        "code": code, "silent": False, "store_history": True,
        "user_expressions": {}, "allow_stdin": False, "stop_on_error": False,
    }, metadata=meta)
    kc.shell_channel.send(msg)
    msg_id = msg["header"]["msg_id"]
    out = {"stdout": "", "stderr": "", "result": None, "status_line": None}
    idle = False
    while not idle:
        m = kc.get_iopub_msg(timeout=60)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        t, c = m["msg_type"], m["content"]
        if t == "stream":
            out[c["name"]] += c["text"]
        elif t == "execute_result":
            out["result"] = c["data"].get("text/plain")
        elif t in ("display_data", "update_display_data") and "benchbook" in c.get("metadata", {}):
            if c["data"].get("text/plain", "").startswith(c["metadata"]["benchbook"]["status"] + " "):
                out["status_line"] = c["metadata"]["benchbook"]
        elif t == "status" and c["execution_state"] == "idle":
            idle = True
    while True:
        reply = kc.get_shell_msg(timeout=60)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    out["status"] = reply["content"]["status"]
    out["error"] = reply["content"].get("evalue", "")
    return out


def main():
    km = KernelManager(kernel_name="benchbook")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    results = []
    for line in open(sys.argv[1]):
        step = json.loads(line)
        if step.get("restart"):
            kc.stop_channels()
            km.restart_kernel(now=False)
            kc = km.client()
            kc.start_channels()
            kc.wait_for_ready(timeout=60)
            results.append({"restarted": True})
            continue
        results.append(execute(kc, step["code"], step.get("cell"), step.get("deleted", ())))
    kc.stop_channels()
    km.shutdown_kernel(now=False)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
