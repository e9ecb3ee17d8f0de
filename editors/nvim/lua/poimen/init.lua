-- poimen for Neovim: starts `mem lsp`, forwards diagnostics and terminal output,
-- and defines :PoimenWhatDoWeKnow, :PoimenRemember, :PoimenSymptoms. Hover is `K`.
local M = {}

local defaults = {
  server_path = nil, -- path to `mem`; nil: <workspace>/.venv/bin/mem, then `mem` on PATH
  server_args = {}, -- extra arguments for `mem lsp` (e.g. { '--log-file', '/tmp/poimen.log' })
  settings = {}, -- the server's options (camelCase): vault, project, budget, scope, ...
  filetypes = nil, -- nil: attach to every filetype
  forward = { diagnostics = true, terminal = true },
  max_output = 256 * 1024, -- characters of command output forwarded (the tail)
}

M.config = vim.deepcopy(defaults)
M.origin = nil -- how the server was found: 'setting' | 'workspace' | 'path'
M.error = nil -- why it was not
local ready = false

local function prepare(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  require('poimen.forward').setup(M.config)
  require('poimen.commands').setup(M.config)
  ready = true
end

--- Fallback for Neovim 0.10 (no vim.lsp.config / vim.lsp.enable).
local function start_on_filetype(config)
  local function start(buf)
    if vim.bo[buf].buftype ~= '' then
      return
    end
    if config.filetypes and not vim.tbl_contains(config.filetypes, vim.bo[buf].filetype) then
      return
    end
    local root = vim.fs.root(buf, config.root_markers) or vim.fn.getcwd()
    vim.lsp.start(vim.tbl_extend('force', config, { root_dir = root }), { bufnr = buf })
  end
  vim.api.nvim_create_autocmd('FileType', {
    group = vim.api.nvim_create_augroup('poimen.start', { clear = true }),
    callback = function(args)
      start(args.buf)
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].filetype ~= '' then
      start(buf)
    end
  end
end

function M.setup(opts)
  prepare(opts)
  local config, origin = require('poimen.server').config(M.config)
  if not config then
    M.error = origin
    vim.notify(origin, vim.log.levels.ERROR)
    return
  end
  M.origin, M.error = origin, nil
  if vim.lsp.config and vim.lsp.enable then
    vim.lsp.config(config.name, config)
    vim.lsp.enable(config.name)
  else
    start_on_filetype(config)
  end
end

--- Called from the client's on_attach (also when only `vim.lsp.enable('poimen')` was used).
function M.attached(_, bufnr)
  if not ready then
    prepare({})
  end
  require('poimen.forward').resend(bufnr)
end

--- Forward a finished command run by other code (a job's on_exit, a task runner).
--- @param run {command: string, exit_code: integer, output: string, cwd?: string}
function M.forward_output(run)
  return require('poimen.forward').output(run, M.config.max_output)
end

--- Run a shell command as a job and forward its output and exit code.
function M.run(cmd, on_exit)
  return require('poimen.forward').run(cmd, M.config, on_exit)
end

return M
