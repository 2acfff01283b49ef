"""Interrupts the benchbook kernel during a workload.http run, as Jupyter
does (SIGINT to the kernel's process group: the kernelspec's interrupt_mode
"signal"), then with an interrupt_request on the control channel, then shuts
it down; prints what it measured as JSON.

usage: interrupt.py MARK   (MARK=VALUE goes into the kernel's environment:
                            every process the kernel starts inherits it)
"""
import json
import os
import sys
import time

from jupyter_client.manager import KernelManager

TARGET = """# %% target
t = backend.demo(rows = 2000)
"""

LOAD = """# %% load{n}
r{n} = workload.http(t.url + "/search?q=t0042", clients = 4, duration = "60s", warmup = "0s")
r{n}.count
"""


def marked(mark):
    """pids of the processes whose environment holds mark."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in env and state != "Z":
            out.append(int(pid))
    return out


def run_until_progress(kc, code, timeout=60):
    """Sends code and waits until its workload shows a live progress line."""
    msg_id = kc.execute(code)
    deadline = time.time() + timeout
    while time.time() < deadline:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] in ("display_data", "update_display_data"):
            if "req/s" in msg["content"]["data"].get("text/plain", ""):
                return msg_id
        if msg["msg_type"] == "error":
            raise SystemExit("the load cell failed: " + msg["content"]["evalue"])
    raise SystemExit("no progress line within %ds" % timeout)


def reply_of(kc, msg_id, timeout=30):
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply


def interrupt_message(km, kc):
    msg = kc.session.msg("interrupt_request", {})
    kc.control_channel.send(msg)


def main(mark):
    name, value = mark.split("=", 1)
    env = dict(os.environ, **{name: value})
    km = KernelManager(kernel_name="benchbook")
    km.start_kernel(env=env)
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    result = {"kernel_pid": km.provisioner.pid}
    reply = reply_of(kc, kc.execute(TARGET))
    result["target"] = reply["content"]["status"]

    for n, how in ((1, "signal"), (2, "message")):
        msg_id = run_until_progress(kc, LOAD.format(n=n))
        time.sleep(0.3)
        sent = time.time()
        if how == "signal":
            km.interrupt_kernel()
        else:
            interrupt_message(km, kc)
        reply = reply_of(kc, msg_id)
        result[how] = {"seconds": time.time() - sent, "status": reply["content"]["status"],
                       "ename": reply["content"].get("ename", "")}

    # The kernel goes on after an interrupt, finished cells kept.
    reply = reply_of(kc, kc.execute("t.url.startswith('http://127.0.0.1:')"))
    result["after"] = reply["content"]["status"]
    result["before_shutdown"] = len(marked(mark))
    start = time.time()
    km.shutdown_kernel(now=False)
    result["shutdown_seconds"] = time.time() - start
    kc.stop_channels()
    time.sleep(0.5)
    result["after_shutdown"] = marked(mark)
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
