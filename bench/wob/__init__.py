"""The MiniWoB++ bench (issue 39): harness, adapters and policies for bench/miniwob.py; see bench/README.md."""
