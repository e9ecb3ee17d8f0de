-- Finding `mem` and building the language-server client config.
local M = {}

M.name = 'poimen'
M.root_markers = { '.venv', 'pyproject.toml', 'package.json', 'Cargo.toml', 'go.mod', '.git' }

local function executable(path)
  return path ~= nil and path ~= '' and vim.fn.executable(path) == 1
end

--- The workspace folders to look in for a `.venv`: the project root of the current
--- buffer (by its markers) and the current directory.
local function workspaces()
  local out = {}
  local ok, root = pcall(vim.fs.root, 0, { '.venv', 'pyproject.toml', '.git' })
  if ok and root then
    table.insert(out, root)
  end
  local cwd = vim.fn.getcwd()
  if cwd ~= root then
    table.insert(out, cwd)
  end
  return out
end

--- Resolve the server: `server_path` option, then `<workspace>/.venv/bin/mem`, then `mem` on PATH.
--- @return string|nil path, string origin_or_error
function M.find(opts)
  opts = opts or {}
  if opts.server_path and opts.server_path ~= '' then
    local path = vim.fn.expand(opts.server_path)
    if executable(path) then
      return path, 'setting'
    end
    return nil, ('poimen: server_path is set to %q, which is not executable'):format(path)
  end
  for _, folder in ipairs(workspaces()) do
    local candidate = vim.fs.joinpath(folder, '.venv', 'bin', 'mem')
    if executable(candidate) then
      return candidate, 'workspace'
    end
  end
  local on_path = vim.fn.exepath('mem')
  if on_path ~= '' then
    return on_path, 'path'
  end
  return nil,
    'poimen: could not find the `mem` language server. Install poimen (`pip install poimen`) '
      .. "into the project's .venv or onto PATH, or pass server_path to require('poimen').setup{}"
end

--- The command line: the executable, the vault (a global option), `lsp`, then the
--- extra arguments for `mem lsp` (such as `--log-file`).
function M.cmd(path, opts)
  local cmd = { path }
  local vault = (opts.settings or {}).vault
  if vault and vault ~= '' then
    vim.list_extend(cmd, { '--vault', vault })
  end
  table.insert(cmd, 'lsp')
  return vim.list_extend(cmd, opts.server_args or {})
end

--- A `vim.lsp.Config` for poimen and how the server was found, or nil and why not.
function M.config(opts)
  local path, origin = M.find(opts)
  if not path then
    return nil, origin
  end
  local settings = vim.deepcopy(opts.settings or {})
  return {
    name = M.name,
    cmd = M.cmd(path, opts),
    filetypes = opts.filetypes,
    root_markers = M.root_markers,
    -- no marker: the current directory is the workspace (terminal frames are matched against it)
    root_dir = function(bufnr, on_dir)
      on_dir(vim.fs.root(bufnr, M.root_markers) or vim.fn.getcwd())
    end,
    init_options = settings,
    settings = { poimen = settings },
    handlers = require('poimen.handlers').handlers(),
    on_attach = function(client, bufnr)
      require('poimen').attached(client, bufnr)
    end,
  }, origin
end

return M
