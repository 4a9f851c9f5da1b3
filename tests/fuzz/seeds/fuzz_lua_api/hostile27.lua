print(pb.partition_apply(setmetatable({}, {__len = function() return 1e9 end}), 1))
