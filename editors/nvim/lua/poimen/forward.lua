-- Forward what Neovim sees to poimen: other sources' diagnostics, and the output and
-- exit code of `:terminal` commands and jobs.
local util = require('poimen.util')
local M = {}

local OWN_SOURCE = 'poimen'
local DEBOUNCE_MS = 150
local MAX_PER_BUFFER = 200

local last = {} -- bufnr -> last payload sent (json)
local timers = {} -- bufnr -> uv timer
local group = vim.api.nvim_create_augroup('poimen.forward', { clear = true })

local function own_namespaces()
  local ours = {}
  for _, client in ipairs(util.clients()) do
    ours[vim.lsp.diagnostic.get_namespace(client.id, false)] = true
    ours[vim.lsp.diagnostic.get_namespace(client.id, true)] = true
  end
  return ours
end

local function position(buf, lnum, col, encoding)
  local line = vim.api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1]
  return { line = lnum, character = util.character(line, col or 0, encoding) }
end

--- Other sources' diagnostics of `buf` in the LSP shape (0-based, client's encoding).
function M.diagnostics(buf, encoding)
  local ours = own_namespaces()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if not ours[d.namespace] and (d.source or ''):lower() ~= OWN_SOURCE and #out < MAX_PER_BUFFER then
      local lsp = (d.user_data or {}).lsp or {}
      local item = {
        range = {
          start = position(buf, d.lnum, d.col, encoding),
          ['end'] = position(buf, d.end_lnum or d.lnum, d.end_col or d.col, encoding),
        },
        message = d.message,
        severity = d.severity or vim.diagnostic.severity.ERROR,
        source = d.source,
        code = d.code or lsp.code,
      }
      table.insert(out, item)
    end
  end
  return out
end

local function send_diagnostics(buf)
  if not vim.api.nvim_buf_is_valid(buf) or vim.bo[buf].buftype ~= '' then
    return
  end
  for _, client in ipairs(util.clients()) do
    local diagnostics = M.diagnostics(buf, client.offset_encoding)
    local payload = vim.json.encode(diagnostics)
    if payload ~= last[buf] and not (last[buf] == nil and #diagnostics == 0) then
      last[buf] = #diagnostics > 0 and payload or nil
      util.notify(client, 'poimen/diagnostics', { uri = vim.uri_from_bufnr(buf), diagnostics = diagnostics })
    end
  end
end

local function schedule_diagnostics(buf)
  local timer = timers[buf]
  if not timer then
    timer = vim.uv.new_timer()
    timers[buf] = timer
  end
  timer:stop()
  timer:start(DEBOUNCE_MS, 0, vim.schedule_wrap(function()
    send_diagnostics(buf)
  end))
end

--- Forward a finished command's output to poimen.
--- @param run {command: string, exit_code: integer, output: string, cwd?: string}
function M.output(run, max_output)
  local text = run.output or ''
  if max_output and #text > max_output then
    text = text:sub(#text - max_output + 1)
  end
  -- what the terminal emulator left of escape sequences, and carriage returns
  text = text:gsub('\27%[[0-?]*[ -/]*[@-~]', ''):gsub('\27%][^\7\27]*\7', ''):gsub('\r\n', '\n'):gsub('\r', '')
  local params = { command = run.command, exitCode = run.exit_code, output = text, cwd = run.cwd }
  for _, client in ipairs(util.clients()) do
    util.notify(client, 'poimen/terminalOutput', params)
  end
  return params
end

--- `term://{cwd}//{pid}:{cmd}` -> cmd, cwd
local function terminal_command(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  local cwd, cmd = name:match('^term://(.-)//%d+:(.*)$')
  if not cmd then
    return nil
  end
  return cmd, vim.fn.fnamemodify(vim.fn.expand(cwd), ':p'):gsub('/$', '')
end

local function terminal_output(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  while #lines > 0 and (lines[#lines]:match('^%s*$') or lines[#lines]:match('^%[Process exited %-?%d+%]$')) do
    table.remove(lines)
  end
  return table.concat(lines, '\n')
end

function M.setup(opts)
  vim.api.nvim_clear_autocmds({ group = group })
  if opts.forward.diagnostics then
    vim.api.nvim_create_autocmd('DiagnosticChanged', {
      group = group,
      callback = function(args)
        schedule_diagnostics(args.buf)
      end,
    })
  end
  if opts.forward.terminal then
    vim.api.nvim_create_autocmd('TermClose', {
      group = group,
      callback = function(args)
        local buf, status = args.buf, vim.v.event.status
        local cmd, cwd = terminal_command(buf)
        if not cmd then
          return
        end
        -- let the terminal drain what the process wrote last
        vim.defer_fn(function()
          if vim.api.nvim_buf_is_valid(buf) then
            M.output({ command = cmd, exit_code = status, output = terminal_output(buf), cwd = cwd }, opts.max_output)
          end
        end, 50)
      end,
    })
  end
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = group,
    callback = function(args)
      last[args.buf] = nil
      if timers[args.buf] then
        timers[args.buf]:close()
        timers[args.buf] = nil
      end
    end,
  })
end

--- A buffer's diagnostics were sent to a client that attached later: send them again.
function M.resend(buf)
  last[buf] = nil
  schedule_diagnostics(buf)
end

--- Run `cmd` as a job (through the shell), then forward its output and exit code.
function M.run(cmd, opts, on_exit)
  local cwd = vim.fn.getcwd()
  local chunks = {}
  local function collect(_, data)
    if data then
      table.insert(chunks, data)
    end
  end
  vim.system({ vim.o.shell, vim.o.shellcmdflag, cmd }, { cwd = cwd, text = true, stdout = collect, stderr = collect },
    function(result)
      vim.schedule(function()
        local params = M.output({ command = cmd, exit_code = result.code, output = table.concat(chunks), cwd = cwd },
          opts.max_output)
        if on_exit then
          on_exit(params)
        end
      end)
    end)
end

return M
