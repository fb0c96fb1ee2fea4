# Chapter 14: a ropegrad checkpoint read from Python, with numpy alone.
#   /usr/bin/python3 docs/tests/read_checkpoint_example.py CHECKPOINT   (from the repository root)
import sys

sys.path.insert(0, "tests")
import read_safetensors as rs

tensors, meta = rs.read(sys.argv[1])
print(meta)
for name, a in sorted(tensors.items()):
    print(name, a.dtype, a.shape)
print(tensors["model.weight"])
