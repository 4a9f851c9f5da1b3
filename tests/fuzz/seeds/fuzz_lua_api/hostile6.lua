print(pcall(pb.find, "%")) print(pcall(pb.find, "[")) print(pcall(pb.find, "(()")) print(#pb.find{op = 1, name = {}})
