-- Small helpers that differ between Neovim 0.10 and 0.11.
local M = {}

M.has_011 = vim.fn.has('nvim-0.11') == 1

function M.clients()
  return vim.lsp.get_clients({ name = 'poimen' })
end

function M.notify(client, method, params)
  if M.has_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.request(client, method, params, handler, bufnr)
  if M.has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- Byte column `col` of `line` in the client's position encoding.
function M.character(line, col, encoding)
  if not line or encoding == 'utf-8' then
    return col
  end
  col = math.min(col, #line)
  local ok, index
  if M.has_011 then
    ok, index = pcall(vim.str_utfindex, line, encoding, col, false)
  else
    local ok32, utf32, utf16 = pcall(vim.str_utfindex, line, col)
    ok, index = ok32, (encoding == 'utf-32' and utf32 or utf16)
  end
  return ok and index or col
end

--- Run `poimen.<command>` on the first poimen client; `on_result(result)` on success.
function M.exec(command, argument, on_result)
  local client = M.clients()[1]
  if not client then
    vim.notify('poimen: the language server is not running (see :checkhealth poimen)', vim.log.levels.WARN)
    return
  end
  local params = { command = command, arguments = { argument or vim.empty_dict() } }
  M.request(client, 'workspace/executeCommand', params, function(err, result)
    if err then
      vim.notify(('poimen: %s'):format(err.message or vim.inspect(err)), vim.log.levels.WARN)
    elseif on_result then
      on_result(result)
    end
  end, vim.api.nvim_get_current_buf())
end

return M
