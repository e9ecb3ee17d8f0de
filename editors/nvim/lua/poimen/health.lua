-- :checkhealth poimen
local M = {}

function M.check()
  local health = vim.health
  health.start('poimen')
  if vim.fn.has('nvim-0.10') == 1 then
    health.ok(('Neovim %s'):format(tostring(vim.version())))
  else
    health.error('Neovim 0.10 or newer is needed', { 'Upgrade Neovim' })
  end
  local poimen = require('poimen')
  local path, origin = require('poimen.server').find(poimen.config)
  if not path then
    health.error(origin, { 'pip install poimen', "require('poimen').setup{ server_path = '/path/to/mem' }" })
    return
  end
  health.ok(('server: %s (found via %s)'):format(path, origin))
  local run = vim.system({ path, '--help' }, { text = true }):wait(20000)
  if run.code == 0 then
    health.ok('`mem --help` runs')
  else
    health.error(('`mem --help` failed (exit %s): %s'):format(tostring(run.code), (run.stderr or ''):sub(1, 400)))
  end
  local settings = poimen.config.settings or {}
  health.info(('vault: %s'):format(settings.vault or os.getenv('POIMEN_VAULT') or 'default ($XDG_DATA_HOME/poimen)'))
  if settings.project then
    health.info('project: ' .. settings.project)
  end
  local clients = vim.lsp.get_clients({ name = 'poimen' })
  if #clients == 0 then
    health.warn('the poimen language server is not running in this session', {
      "call require('poimen').setup{} in your config, or vim.lsp.enable('poimen') on Neovim 0.11",
    })
  end
  for _, client in ipairs(clients) do
    local buffers = vim.tbl_count(client.attached_buffers or {})
    health.ok(('client %d running, attached to %d buffer(s), encoding %s'):format(client.id, buffers,
      client.offset_encoding))
  end
  local forward = poimen.config.forward
  health.info(('forwarding: diagnostics %s, terminal %s'):format(forward.diagnostics and 'on' or 'off',
    forward.terminal and 'on' or 'off'))
end

return M
