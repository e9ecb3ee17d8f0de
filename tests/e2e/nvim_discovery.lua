-- Server discovery in real Neovim: prints one JSON line per case (tests/e2e/test_nvim.py).
vim.opt.rtp:prepend(os.getenv('POIMEN_PLUGIN'))
local server = require('poimen.server')
local out = {}
vim.cmd.cd(os.getenv('POIMEN_WORKSPACE'))
out.workspace = { server.find({}) }
out.setting = { server.find({ server_path = os.getenv('POIMEN_SETTING') }) }
out.bad_setting = { server.find({ server_path = '/nonexistent/mem' }) }
vim.cmd.cd(os.getenv('POIMEN_EMPTY'))
out.none = { server.find({}) }
out.cmd = server.cmd('/x/mem', { settings = { vault = '/v' }, server_args = { '--log-level', 'info' } })
io.stdout:write(vim.json.encode(out), '\n')
