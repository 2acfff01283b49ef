"""Plays a JupyterLab session against the benchbook kernel: each step sends
code with the cell id (and deleted cells) JupyterLab puts in an
execute_request's metadata, or a completion or inspection request, and the
step's outcome is printed as JSON: reply status, error, result text,
stdout (less the outcome line), stderr, the cell's outcome (the reply's
metadata.benchbook, when shown) and where it was shown, the other displays,
clear_output messages, the user_expressions answered, and how the displays
with a display_id were sent (display_data, then update_display_data).

usage: cells.py STEPS.jsonl   (one JSON object per line:
                              {"code": ..., "cell": id or null,
                               "deleted": [...], "user_expressions": {...}},
                              {"complete": code}, {"inspect": code},
                              {"run": argv} (a command; "{kernel_pid}" in
                              an argument is the kernel's pid)
                              or {"restart": true})

The JSON printed is {"steps": [one result per step], "kernel_pid": the
last kernel's pid, "shutdown_seconds": how long its shutdown took}.
"""
import json
import subprocess
import sys
import time

from jupyter_client.manager import KernelManager


def reply_to(kc, msg_id):
    while True:
        reply = kc.get_shell_msg(timeout=120)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply


def execute(kc, code, cell=None, deleted=(), user_expressions=None):
    meta = {}
    if cell:
        meta["cellId"] = cell
    if deleted:
        meta["deletedCells"] = list(deleted)
    msg = kc.session.msg("execute_request", {
        "code": code, "silent": False, "store_history": True,
        "user_expressions": user_expressions or {}, "allow_stdin": False, "stop_on_error": False,
    }, metadata=meta)
    start = time.time()
    kc.shell_channel.send(msg)
    msg_id = msg["header"]["msg_id"]
    out = {"stdout": "", "stderr": "", "result": None, "status_line": None, "status_line_shown": None, "displays": [],
           "clears": 0, "display_ids": {}}
    idle = False
    while not idle:
        m = kc.get_iopub_msg(timeout=120)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        t, c = m["msg_type"], m["content"]
        if t == "stream":
            out[c["name"]] += c["text"]
        elif t == "execute_result":
            out["result"] = c["data"].get("text/plain")
        elif t == "clear_output":
            out["clears"] += 1
        elif t in ("display_data", "update_display_data"):
            display_id = c.get("transient", {}).get("display_id")
            if display_id:
                seen = out["display_ids"].setdefault(display_id, {"display_data": 0, "update_display_data": 0, "texts": []})
                seen[t] += 1
                seen["texts"].append(c["data"].get("text/plain", ""))
            if "benchbook" in c.get("metadata", {}) and \
                    c["data"].get("text/plain", "").startswith(c["metadata"]["benchbook"]["status"] + " "):
                out["status_line_shown"] = "display"
            elif not display_id:
                out["displays"].append(c["data"])
        elif t == "error":
            out["traceback"] = c["traceback"]
        elif t == "status" and c["execution_state"] == "idle":
            idle = True
    reply = reply_to(kc, msg_id)
    out["seconds"] = time.time() - start
    # The cell's outcome: in the reply's metadata, and shown as the first
    # line of its text output, on its status display, or as the first line
    # of its error's traceback.
    meta = reply["metadata"].get("benchbook")
    if meta:
        prefix = meta["status"] + " " + meta["cell"]
        if out["stdout"].startswith(prefix):
            out["status_line_shown"] = "stdout"
            out["stdout"] = out["stdout"].split("\n", 1)[1]
        elif (out.get("traceback") or [""])[0].startswith(prefix):
            out["status_line_shown"] = "traceback"
        if out.get("status_line_shown"):
            out["status_line"] = meta
    out["status"] = reply["content"]["status"]
    out["error"] = reply["content"].get("evalue", "")
    out["user_expressions"] = reply["content"].get("user_expressions")
    return out


def complete(kc, code):
    reply = reply_to(kc, kc.complete(code))
    return {"status": reply["content"]["status"], "matches": reply["content"]["matches"]}


def inspect(kc, code):
    reply = reply_to(kc, kc.inspect(code))
    c = reply["content"]
    return {"status": c["status"], "found": c["found"], "text": c["data"].get("text/plain", "")}


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
        elif "complete" in step:
            results.append(complete(kc, step["complete"]))
        elif "inspect" in step:
            results.append(inspect(kc, step["inspect"]))
        elif "run" in step:
            argv = [a.replace("{kernel_pid}", str(km.provisioner.pid)) for a in step["run"]]
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            results.append({"stdout": done.stdout, "stderr": done.stderr, "status": str(done.returncode)})
        else:
            results.append(execute(kc, step["code"], step.get("cell"), step.get("deleted", ()),
                                   step.get("user_expressions")))
    pid = km.provisioner.pid
    kc.stop_channels()
    start = time.time()
    km.shutdown_kernel(now=False)
    json.dump({"steps": results, "kernel_pid": pid, "shutdown_seconds": time.time() - start}, sys.stdout)


if __name__ == "__main__":
    main()
