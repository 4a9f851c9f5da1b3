x = (x or 0) + 1
print(pb.cmd("lua return 1 + 1"), pb.cmd("info --top 3"), pb.cmd("view zoom 2"))
print(pcall(pb.cmd, "find \\(a*\\)*\\1"), pcall(pb.cmd, "repeat 3 'undo'"))
print(pcall(pb.cmd, "source scripts/no_fuse_pool.lua"))
return setmetatable({}, {__tostring = function() return "obj" end})
