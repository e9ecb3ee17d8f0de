-- Neovim 0.11 native configuration: `vim.lsp.enable('poimen')` works without setup{}
-- (require('poimen').setup{} does the same and takes options).
local config, origin = require('poimen.server').config(require('poimen').config)
if not config then
  vim.notify(origin, vim.log.levels.WARN)
  return { cmd = { 'mem', 'lsp' } }
end
return config
