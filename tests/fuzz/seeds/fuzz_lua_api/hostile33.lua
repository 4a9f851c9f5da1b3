print(pcall(pb.cmd, "fuse --plan /tmp/x.json"), pcall(pb.cmd, "shard --layout layouts/cluster-1x8.lua --scheme 8 --emit-tasks /tmp/tasks"))
