local t = setmetatable({}, {__index = function(t, k) return k end}) print(table.concat(t, "", 1, 1e9))
