local t = {} for i = 1, 2e6 do t[i] = i end table.sort(t, function(a, b) return a > b end)
