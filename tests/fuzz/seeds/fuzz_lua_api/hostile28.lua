print(pcall(pb.partition_apply, {1, 2, 3}, math.mininteger))
