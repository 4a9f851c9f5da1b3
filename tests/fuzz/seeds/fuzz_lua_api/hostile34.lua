print(pcall(pb.cmd, "train --episodes 1 -o /tmp/a.ckpt"), pcall(pb.cmd, "tune --op gemm --shape 8,8,8 --trials 1 --log /tmp/t.jsonl"))
