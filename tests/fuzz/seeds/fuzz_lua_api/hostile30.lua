print(pcall(pb.cmd, "plan --load /dev/zero")) print(pcall(pb.cmd, "open /dev/urandom"))
