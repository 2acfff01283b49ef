"""Executes a notebook with nbclient (Debian's python3-nbclient), as papermill
and CI pipelines do, with the benchbook kernel; writes the executed notebook
and prints, per code cell, what its outputs say: the benchbook status the
kernel put in their metadata and the MIME types shown.

usage: nbclient_run.py IN.ipynb OUT.ipynb
"""
import json
import os
import sys

import nbclient
import nbformat


def main(src, dest):
    nb = nbformat.read(src, as_version=4)
    # What jupyter_server tells a kernel: which notebook it serves.
    os.environ["JPY_SESSION_NAME"] = os.path.abspath(src)
    client = nbclient.NotebookClient(
        nb, kernel_name="benchbook", timeout=240, startup_timeout=60,
        resources={"metadata": {"path": os.path.dirname(os.path.abspath(src))}})
    client.execute()
    nbformat.write(nb, dest)
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        statuses, mimes, outputs = [], [], []
        for out in cell.outputs:
            meta = out.get("metadata", {}).get("benchbook")
            data = out.get("data", {})
            if meta and data.get("text/plain", "").startswith(meta["status"] + " "):
                statuses.append(meta)  # the cell's status line
                continue
            mimes.extend(sorted(data))
            if out.output_type == "stream":
                mimes.append("stream:" + out.name)
            # What the cell shows; the metadata says hit or ran, which differs.
            outputs.append({k: v for k, v in out.items() if k not in ("execution_count", "metadata")})
        cells.append({"id": cell.id, "status": statuses, "mimes": mimes, "outputs": outputs})
    json.dump(cells, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
