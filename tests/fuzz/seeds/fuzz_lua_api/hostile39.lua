print(utf8.char(table.unpack((function() local t = {} for i = 1, 100000 do t[i] = 0x10FFFF end return t end)())):len())
