local n = pb.node(0) pb.cmd("open models/tiny_branches.dot") print(pcall(function() return n.name end))
