print(pcall(pb.cmd, "export -o /dev/stdout")) print(pcall(pb.cmd, "save /tmp/../tmp/x.json"))
