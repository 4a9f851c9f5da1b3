error(setmetatable({}, {__tostring = function() error("inner") end}))
