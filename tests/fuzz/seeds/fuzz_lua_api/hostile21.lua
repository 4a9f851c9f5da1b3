print(pcall(pb.rule, {match = print, specs = setmetatable({}, {__index = function() error("x") end})}))
