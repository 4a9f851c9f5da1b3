print(pcall(table.sort, {3, 2, 1, 5, 4, 7, 6, 9, 8}, function() return true end))
